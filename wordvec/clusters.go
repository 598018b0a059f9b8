package wordvec

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// Level is a granularity of the table's word clusters.
type Level int

// The two levels, fixed (not tuned): COARSE groups words by broad topic, FINE by near-synonymy.
const (
	Coarse Level = iota
	Fine
)

// Levels lists every level, in the order of clusters.bin.
var Levels = []Level{Coarse, Fine}

// String returns the level's name, as features and files spell it.
func (l Level) String() string {
	switch l {
	case Coarse:
		return "coarse"
	case Fine:
		return "fine"
	}
	return "level" + strconv.Itoa(int(l))
}

// K returns the number of clusters of the level.
func (l Level) K() int {
	switch l {
	case Coarse:
		return 256
	case Fine:
		return 2048
	}
	return 0
}

//go:embed clusters.bin
var clustersBin []byte

// clustersMagic starts clusters.bin's header line, which then names the table the clusters were
// made from and the levels' sizes: "wordvec clusters 1 table=<ID> k=256,2048\n". The header is
// followed, per level in the order of Levels, by one little-endian uint16 cluster id per word
// in the table's order.
const clustersMagic = "wordvec clusters 1"

// clustersHeader returns the header line of clusters made from the table with the given ID.
func clustersHeader(tableID string) string {
	ks := make([]string, len(Levels))
	for i, l := range Levels {
		ks[i] = strconv.Itoa(l.K())
	}
	return fmt.Sprintf("%s table=%s k=%s\n", clustersMagic, tableID, strings.Join(ks, ","))
}

// EncodeClusters returns the bytes of clusters.bin for table t: assign[i] holds, for Levels[i],
// each word's cluster id in the table's order.
func EncodeClusters(t *Table, assign [][]uint16) ([]byte, error) {
	if len(assign) != len(Levels) {
		return nil, fmt.Errorf("wordvec: %d levels of clusters, want %d", len(assign), len(Levels))
	}
	out := []byte(clustersHeader(t.ID()))
	for i, l := range Levels {
		if len(assign[i]) != t.Len() {
			return nil, fmt.Errorf("wordvec: %s clusters for %d words, want %d", l, len(assign[i]), t.Len())
		}
		for _, c := range assign[i] {
			if int(c) >= l.K() {
				return nil, fmt.Errorf("wordvec: %s cluster %d outside [0, %d)", l, c, l.K())
			}
			out = binary.LittleEndian.AppendUint16(out, c)
		}
	}
	return out, nil
}

// withClusters attaches clusters.bin's contents b to t, which must be the table they were made
// from.
func (t *Table) withClusters(b []byte) error {
	header, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(header)+"\n" != clustersHeader(t.id) {
		return fmt.Errorf("wordvec: clusters header %.120q, want %q: the clusters were made from another table (run WORDVEC_CLUSTERS=1 go generate ./wordvec)", header, clustersHeader(t.id))
	}
	if len(rest) != 2*len(Levels)*t.Len() {
		return fmt.Errorf("wordvec: %d bytes of clusters for %d words, want %d", len(rest), t.Len(), 2*len(Levels)*t.Len())
	}
	t.clusters = make([][]uint16, len(Levels))
	for i, l := range Levels {
		t.clusters[i] = make([]uint16, t.Len())
		for w := range t.clusters[i] {
			c := binary.LittleEndian.Uint16(rest[2*(i*t.Len()+w):])
			if int(c) >= l.K() {
				return fmt.Errorf("wordvec: %s cluster %d of %q outside [0, %d)", l, c, t.words[w], l.K())
			}
			t.clusters[i][w] = c
		}
	}
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	h.Write(b) // the header names the table, so this covers the vectors too
	t.clustersID = fmt.Sprintf("crc32c:%08x:%s", h.Sum32(), strings.TrimPrefix(strings.Fields(string(header))[4], "k="))
	return nil
}

// Cluster returns the id (in [0, l.K())) of a lower-case word's cluster at level l, found by the
// same Forms as Vector, and whether the table has the word and clusters.
func (t *Table) Cluster(word string, l Level) (int, bool) {
	if t.clusters == nil || l < 0 || int(l) >= len(t.clusters) {
		return 0, false
	}
	i, ok := t.lookup(word)
	if !ok {
		return 0, false
	}
	return int(t.clusters[l][i]), true
}

// ClustersID identifies the table's clusters and the table they were made from (the CRC-32C of
// clusters.bin, whose header names the table's ID): a model trained on cluster features must not
// be read with other clusters. It is empty for a table without clusters.
func (t *Table) ClustersID() string { return t.clustersID }

// Word returns the table's i-th word (in frequency order).
func (t *Table) Word(i int) string { return t.words[i] }
