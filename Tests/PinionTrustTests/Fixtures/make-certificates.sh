#!/bin/sh
# Makes the DER certificates of PinionTrustTests with openssl, and their RFC 7469 pins
# computed by openssl (the independent oracle the tests compare CertificateSPKI's pins with).
# Run from this directory: sh make-certificates.sh. Keys are P-256 and thrown away.
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
days=36500
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/$1.key"; }
key root
key intermediate
key leaf
key second-leaf
openssl req -x509 -new -key "$work/root.key" -subj "/CN=Pinion Portable Test Root" -days $days \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
    -outform DER -out root.der
cat > "$work/ca.ext" <<EXT
basicConstraints=critical,CA:TRUE,pathlen:0
keyUsage=critical,keyCertSign
EXT
cat > "$work/leaf.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:api.example.test,DNS:*.example.test
EXT
openssl req -new -key "$work/intermediate.key" -subj "/CN=Pinion Portable Test Intermediate" -out "$work/intermediate.csr"
openssl x509 -req -in "$work/intermediate.csr" -CA root.der -CAform DER -CAkey "$work/root.key" -days $days \
    -extfile "$work/ca.ext" -set_serial 2 -outform DER -out intermediate.der
for name in leaf second-leaf; do
    openssl req -new -key "$work/$name.key" -subj "/CN=api.example.test" -out "$work/$name.csr"
    openssl x509 -req -in "$work/$name.csr" -CA intermediate.der -CAform DER -CAkey "$work/intermediate.key" \
        -days $days -extfile "$work/leaf.ext" -set_serial "$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')" \
        -outform DER -out "$name.der"
done
: > pins.txt
for name in root intermediate leaf second-leaf; do
    pin=$(openssl x509 -inform DER -in "$name.der" -pubkey -noout | openssl pkey -pubin -outform DER \
        | openssl dgst -sha256 -binary | openssl base64 -A)
    echo "$name.der sha256/$pin" >> pins.txt
done
cat pins.txt
