// Test certificates made with the openssl CLI in a temporary directory: root, intermediate, leaves, an expired one.
package org.pinion.tls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

public final class TestPki {
    public final Path dir;

    public TestPki(Path dir) throws IOException, InterruptedException {
        this.dir = dir;
        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "root.key", "-out", "root.pem",
                "-days", "30", "-subj", "/CN=Pinion Test Root", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        Files.writeString(dir.resolve("ca.ext"), "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n");
        issue("int", "/CN=Pinion Test Intermediate", "root", "ca.ext");
        String names = "DNS:api.example.test,DNS:sub.api.example.test,DNS:notapi.example.test,DNS:report.example.test,IP:127.0.0.1";
        Files.writeString(dir.resolve("leaf.ext"), "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                + "extendedKeyUsage=serverAuth\nsubjectAltName=" + names + "\n");
        issue("leaf", "/CN=api.example.test", "int", "leaf.ext");
        issue("leaf2", "/CN=api.example.test", "int", "leaf.ext");
        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "stray.key", "-out", "stray.pem",
                "-days", "30", "-subj", "/CN=stray");
        // Expired: openssl ca can set past dates.
        Files.createDirectories(dir.resolve("cadb"));
        Files.writeString(dir.resolve("cadb/index.txt"), "");
        Files.writeString(dir.resolve("cadb/serial"), "1000\n");
        Files.writeString(dir.resolve("ca.cnf"), "[ca]\ndefault_ca=d\n[d]\ndatabase=cadb/index.txt\nserial=cadb/serial\nnew_certs_dir=cadb\n"
                + "default_md=sha256\npolicy=p\ncopy_extensions=none\nunique_subject=no\n[p]\ncommonName=supplied\n");
        run("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "expired.key", "-out", "expired.csr",
                "-subj", "/CN=api.example.test");
        run("ca", "-batch", "-config", "ca.cnf", "-cert", "int.pem", "-keyfile", "int.key", "-in", "expired.csr", "-out", "expired.pem",
                "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-extfile", "leaf.ext", "-notext");
        Files.writeString(dir.resolve("chain.pem"), Files.readString(dir.resolve("int.pem")));
        Files.writeString(dir.resolve("chain-with-stray.pem"), Files.readString(dir.resolve("int.pem")) + Files.readString(dir.resolve("stray.pem")));
    }

    /**
     * Adds a self-signed CA (P-256, basicConstraints CA:TRUE), as a debugging proxy or an MDM profile
     * would install, and a leaf it issues for the test host names.
     *
     * @param ca the CA's file name stem ({@code ca.pem}, {@code ca.key})
     * @param leaf the leaf's file name stem
     */
    public void addCaWithLeaf(String ca, String leaf) throws IOException, InterruptedException {
        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", ca + ".key", "-out", ca + ".pem",
                "-days", "30", "-subj", "/CN=Pinion Test " + ca, "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        issue(leaf, "/CN=api.example.test", ca, "leaf.ext");
    }

    private void issue(String name, String subject, String ca, String ext) throws IOException, InterruptedException {
        run("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                "-subj", subject);
        run("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key", "-CAcreateserial", "-days", "30",
                "-extfile", ext, "-out", name + ".pem");
    }

    public void run(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (p.waitFor() != 0) throw new IOException("openssl " + String.join(" ", args) + ": " + new String(out, StandardCharsets.UTF_8));
    }

    public X509Certificate cert(String name) throws Exception {
        try (InputStream in = Files.newInputStream(dir.resolve(name + ".pem"))) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    public Path path(String name) { return dir.resolve(name); }
}
