// Package layers holds the test that keeps gymlens's packages in their
// layers (docs/architecture.md): which may import which, and which may
// link DuckDB. It has no code of its own.
package layers
