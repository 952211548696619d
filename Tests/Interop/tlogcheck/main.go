// tlogcheck verifies a Pinion transparency-log directory with Go's golang.org/x/mod sumdb/note and sumdb/tlog.
//
// It is an independent cross-check of the Swift code in Sources/PinionLog: nothing here
// is shared with it. x/mod 0.7 knows only note key type 0x01 and hard-codes the sumdb
// checkpoint text in tlog.ParseTree, so the C2SP checkpoint lines and tlog-cosignature/v1
// (type 0x04) are checked here with the standard library.
//
// Usage:
//
//	tlogcheck log DIR     DIR holds log.vkey, witness.vkey, checkpoint, old-checkpoint,
//	                      consistency, manifest.proof and the C2SP tiles under tile/
//	tlogcheck cosig FILE  FILE holds a witness vkey line, then a cosigned checkpoint note
//
// Exit status 0 when everything verifies, 1 (with the reason on stderr) otherwise.
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func main() {
	if len(os.Args) != 3 {
		fail(errors.New("usage: tlogcheck log DIR | tlogcheck cosig FILE"))
	}
	var err error
	switch os.Args[1] {
	case "log":
		err = checkLog(os.Args[2])
	case "cosig":
		err = checkCosigVector(os.Args[2])
	default:
		err = errors.New("unknown mode " + os.Args[1])
	}
	if err != nil {
		fail(err)
	}
	fmt.Println("ok")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tlogcheck:", err)
	os.Exit(1)
}

func read(dir, name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }

// checkpoint is a C2SP tlog-checkpoint body: origin, size, root hash (no extensions here).
type checkpoint struct {
	origin string
	tree   tlog.Tree
}

func parseCheckpoint(text string) (checkpoint, error) {
	lines := strings.Split(text, "\n")
	if len(lines) != 4 || lines[3] != "" {
		return checkpoint{}, errors.New("checkpoint: want exactly three lines")
	}
	n, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != lines[1] {
		return checkpoint{}, errors.New("checkpoint: bad size")
	}
	h, err := tlog.ParseHash(lines[2])
	if err != nil || base64.StdEncoding.EncodeToString(h[:]) != lines[2] {
		return checkpoint{}, errors.New("checkpoint: bad root hash")
	}
	return checkpoint{origin: lines[0], tree: tlog.Tree{N: n, Hash: h}}, nil
}

// openCheckpoint verifies the log's note signature with x/mod's note.Open and parses the body.
func openCheckpoint(msg []byte, logKey note.Verifier) (*note.Note, checkpoint, error) {
	n, err := note.Open(msg, note.VerifierList(logKey))
	if err != nil {
		return nil, checkpoint{}, fmt.Errorf("note.Open: %w", err)
	}
	if err := canonicalSignatures(n); err != nil {
		return nil, checkpoint{}, err
	}
	c, err := parseCheckpoint(n.Text)
	if err != nil {
		return nil, checkpoint{}, err
	}
	if c.origin != logKey.Name() {
		return nil, checkpoint{}, errors.New("checkpoint origin is not the log key's name")
	}
	return n, c, nil
}

// canonicalSignatures refuses signature lines in non-canonical base64: x/mod's note.Open
// decodes with base64.StdEncoding, which ignores non-zero trailing bits, so a changed last
// character could otherwise leave a signature valid.
func canonicalSignatures(n *note.Note) error {
	for _, sig := range append(append([]note.Signature{}, n.Sigs...), n.UnverifiedSigs...) {
		if _, err := base64.StdEncoding.Strict().DecodeString(sig.Base64); err != nil {
			return fmt.Errorf("signature by %s: non-canonical base64", sig.Name)
		}
	}
	return nil
}

// cosigKey is a tlog-cosignature/v1 verifier key (note key type 0x04).
type cosigKey struct {
	name string
	id   uint32
	pub  ed25519.PublicKey
}

func parseCosigKey(vkey string) (cosigKey, error) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return cosigKey{}, errors.New("witness vkey: want name+hash+key")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(parts[2])
	if err != nil || len(raw) != 33 || raw[0] != 0x04 {
		return cosigKey{}, errors.New("witness vkey: want type 0x04 and a 32-byte key")
	}
	sum := sha256.Sum256(append([]byte(parts[0]+"\n"), raw...))
	id := binary.BigEndian.Uint32(sum[:4])
	if hex.EncodeToString(sum[:4]) != parts[1] {
		return cosigKey{}, errors.New("witness vkey: key hash mismatch")
	}
	return cosigKey{name: parts[0], id: id, pub: ed25519.PublicKey(raw[1:])}, nil
}

// verifyCosignature finds the witness's signature among the note's unverified ones and
// checks it over "cosignature/v1\ntime T\n" || note text; it returns T.
func verifyCosignature(n *note.Note, key cosigKey) (uint64, error) {
	for _, sig := range n.UnverifiedSigs {
		if sig.Name != key.name || sig.Hash != key.id {
			continue
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(sig.Base64)
		if err != nil || len(raw) != 4+8+64 {
			return 0, errors.New("cosignature: malformed")
		}
		t := binary.BigEndian.Uint64(raw[4:12])
		msg := fmt.Sprintf("cosignature/v1\ntime %d\n%s", t, n.Text)
		if t > 1<<63-1 || !ed25519.Verify(key.pub, []byte(msg), raw[12:]) {
			return 0, errors.New("cosignature: does not verify")
		}
		return t, nil
	}
	return 0, errors.New("cosignature: none by the witness")
}

// tileDir reads C2SP tiles (tile/L/N[.p/W]) for x/mod's TileHashReader (tile/H/L/N[.p/W]).
type tileDir struct{ dir string }

func (d tileDir) Height() int { return 8 }

func (d tileDir) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	var data [][]byte
	for _, t := range tiles {
		path := strings.Replace(t.Path(), "tile/8/", "tile/", 1)
		b, err := os.ReadFile(filepath.Join(d.dir, filepath.FromSlash(path)))
		if err != nil {
			return nil, err
		}
		if len(b) != t.W*tlog.HashSize {
			return nil, fmt.Errorf("%s: wrong length", path)
		}
		data = append(data, b)
	}
	return data, nil
}

func (d tileDir) SaveTiles([]tlog.Tile, [][]byte) {}

// bundlePath is the C2SP entry bundle path for bundle n of width w.
func bundlePath(n int64, w int) string {
	t := tlog.Tile{H: 8, L: 0, N: n, W: w}
	return strings.Replace(t.Path(), "tile/8/0/", "tile/entries/", 1)
}

// checkTree recomputes the root hash from the tiles (TileHashReader checks each tile read
// against the tree) and every leaf hash from the entry bundles.
func checkTree(dir string, tree tlog.Tree) error {
	r := tlog.TileHashReader(tree, tileDir{dir})
	h, err := tlog.TreeHash(tree.N, r)
	if err != nil {
		return fmt.Errorf("tree %d from tiles: %w", tree.N, err)
	}
	if h != tree.Hash {
		return fmt.Errorf("tree %d: root hash from tiles differs", tree.N)
	}
	for start := int64(0); start < tree.N; start += 256 {
		w := tree.N - start
		if w > 256 {
			w = 256
		}
		b, err := read(dir, filepath.FromSlash(bundlePath(start/256, int(w))))
		if err != nil {
			return err
		}
		for i := int64(0); i < w; i++ {
			if len(b) < 2 {
				return errors.New("entry bundle truncated")
			}
			l := int(binary.BigEndian.Uint16(b))
			if len(b) < 2+l {
				return errors.New("entry bundle truncated")
			}
			stored, err := r.ReadHashes([]int64{tlog.StoredHashIndex(0, start+i)})
			if err != nil {
				return err
			}
			if tlog.RecordHash(b[2:2+l]) != stored[0] {
				return fmt.Errorf("entry %d does not hash to its tile", start+i)
			}
			b = b[2+l:]
		}
		if len(b) != 0 {
			return errors.New("entry bundle has trailing bytes")
		}
	}
	return nil
}

func hashLines(lines []string) (tlog.TreeProof, error) {
	var p tlog.TreeProof
	for _, line := range lines {
		h, err := tlog.ParseHash(line)
		if err != nil {
			return nil, err
		}
		if base64.StdEncoding.EncodeToString(h[:]) != line {
			return nil, errors.New("non-canonical base64 hash")
		}
		p = append(p, h)
	}
	return p, nil
}

func checkLog(dir string) error {
	vkey, err := read(dir, "log.vkey")
	if err != nil {
		return err
	}
	logKey, err := note.NewVerifier(string(vkey))
	if err != nil {
		return fmt.Errorf("log vkey: %w", err)
	}
	wkey, err := read(dir, "witness.vkey")
	if err != nil {
		return err
	}
	witness, err := parseCosigKey(string(wkey))
	if err != nil {
		return err
	}

	// The checkpoints: log signature (x/mod), cosignature (here), tiles and bundles.
	var trees []tlog.Tree
	for _, name := range []string{"old-checkpoint", "checkpoint"} {
		msg, err := read(dir, name)
		if err != nil {
			return err
		}
		n, c, err := openCheckpoint(msg, logKey)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := verifyCosignature(n, witness); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := checkTree(dir, c.tree); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		trees = append(trees, c.tree)
	}
	old, cur := trees[0], trees[1]

	// Consistency: the proof the Swift code wrote, and one Go computes from the tiles.
	text, err := read(dir, "consistency")
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if len(text) == 0 {
		lines = nil
	}
	swiftProof, err := hashLines(lines)
	if err != nil {
		return fmt.Errorf("consistency: %w", err)
	}
	if err := tlog.CheckTree(swiftProof, cur.N, cur.Hash, old.N, old.Hash); err != nil {
		return fmt.Errorf("consistency (Swift proof): %w", err)
	}
	goProof, err := tlog.ProveTree(cur.N, old.N, tlog.TileHashReader(cur, tileDir{dir}))
	if err != nil {
		return err
	}
	if err := tlog.CheckTree(goProof, cur.N, cur.Hash, old.N, old.Hash); err != nil {
		return fmt.Errorf("consistency (Go proof): %w", err)
	}

	// manifest.proof: C2SP tlog-proof@v1 of the last entry.
	proof, err := read(dir, "manifest.proof")
	if err != nil {
		return err
	}
	split := bytes.Index(proof, []byte("\n\n"))
	if split < 0 {
		return errors.New("manifest.proof: no checkpoint")
	}
	head := strings.Split(string(proof[:split]), "\n")
	if len(head) < 3 || head[0] != "c2sp.org/tlog-proof@v1" || !strings.HasPrefix(head[1], "extra ") ||
		!strings.HasPrefix(head[2], "index ") {
		return errors.New("manifest.proof: bad header lines")
	}
	extra, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(head[1], "extra "))
	if err != nil {
		return fmt.Errorf("manifest.proof extra: %w", err)
	}
	index, err := strconv.ParseInt(strings.TrimPrefix(head[2], "index "), 10, 64)
	if err == nil && strconv.FormatInt(index, 10) != strings.TrimPrefix(head[2], "index ") {
		err = errors.New("not canonical decimal")
	}
	if err != nil {
		return fmt.Errorf("manifest.proof index: %w", err)
	}
	recordProof, err := hashLines(head[3:])
	if err != nil {
		return fmt.Errorf("manifest.proof hashes: %w", err)
	}
	n, c, err := openCheckpoint(proof[split+2:], logKey)
	if err != nil {
		return fmt.Errorf("manifest.proof: %w", err)
	}
	if _, err := verifyCosignature(n, witness); err != nil {
		return fmt.Errorf("manifest.proof: %w", err)
	}
	if c.tree != cur {
		return errors.New("manifest.proof: not the current checkpoint")
	}
	if index != cur.N-1 {
		return errors.New("manifest.proof: not the last entry")
	}
	if err := tlog.CheckRecord(tlog.RecordProof(recordProof), c.tree.N, c.tree.Hash, index, tlog.RecordHash(extra)); err != nil {
		return fmt.Errorf("manifest.proof inclusion: %w", err)
	}
	last, err := read(dir, filepath.FromSlash(bundlePath(index/256, int(index%256+1))))
	if err != nil {
		return err
	}
	if !bytes.HasSuffix(last, extra) {
		return errors.New("manifest.proof: extra is not the last logged entry")
	}
	return nil
}

func checkCosigVector(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	vkey, msg, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return errors.New("vector: want a vkey line then a note")
	}
	key, err := parseCosigKey(string(vkey))
	if err != nil {
		return err
	}
	// The vector's note carries only a cosignature, which x/mod cannot verify: open it with
	// no known keys and take the unverified signatures.
	_, err = note.Open(msg, note.VerifierList())
	var unverified *note.UnverifiedNoteError
	if !errors.As(err, &unverified) {
		return fmt.Errorf("vector note: %v", err)
	}
	if _, err := parseCheckpoint(unverified.Note.Text); err != nil {
		return err
	}
	if err := canonicalSignatures(unverified.Note); err != nil {
		return err
	}
	_, err = verifyCosignature(unverified.Note, key)
	return err
}
