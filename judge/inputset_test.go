package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The set a dry run keeps of the inputs of earlier slices holds exactly
// what was added, batch after batch, duplicates and all, and tells hashes
// apart by their first 16 bytes.
func TestInputSet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	hash := func(i int) string {
		s := sha256.Sum256([]byte(fmt.Sprint(i)))
		return hex.EncodeToString(s[:])
	}
	var s inputSet
	in := map[int]bool{}
	for batch := 0; batch < 40; batch++ {
		var ks []key16
		for range r.IntN(300) {
			i := r.IntN(5000)
			in[i] = true
			ks = append(ks, hashKey(hash(i)))
		}
		s.add(ks)
		for i := range 5000 {
			if s.has(hashKey(hash(i))) != in[i] {
				t.Fatalf("after batch %d: has(%d) = %v, added %v", batch, i, !in[i], in[i])
			}
		}
	}
	if len(s.keys) < len(in) {
		t.Fatalf("%d keys for %d inputs", len(s.keys), len(in))
	}
	// Not hex, or short: hashed again, still told apart.
	if hashKey("x") == hashKey("y") || hashKey("zz"+hash(1)[2:]) == hashKey(hash(1)) {
		t.Error("distinct inputs share a key")
	}
}
