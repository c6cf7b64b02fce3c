package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// openai-server serves the in-process OpenAI-compatible endpoint on
// loopback, prints its base URL, answers a judge's request with a valid
// answer and stops when told; an address off loopback is refused.
func TestOpenAIServerCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveOpenAIAt(ctx, "127.0.0.1:0", 0, w); w.Close() }()
	url, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1\n") {
		t.Fatalf("printed %q, %v", url, err)
	}
	go io.Copy(io.Discard, r)
	body := `{"model": "m", "messages": [{"role": "user", "content": "[1] the agent wrote the plan"}],
		"response_format": {"type": "json_schema", "json_schema": {"name": "tc_answer"}}}`
	resp, err := http.Post(strings.TrimSpace(url)+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Choices []struct{ Message struct{ Content string } }
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(got.Choices) != 1 || !strings.Contains(got.Choices[0].Message.Content, "correctness") {
		t.Errorf("answer: %d %+v %v", resp.StatusCode, got, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stopped: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not stop")
	}
	for _, addr := range []string{"0.0.0.0:8000", "example.org:80", ":8000"} {
		if err := serveOpenAIAt(context.Background(), addr, 0, io.Discard); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("--addr %s: %v", addr, err)
		}
	}
}

// The README's tour and docs/judge.md say how to try judge offline, and
// the tour's judge line asks where openai-server listens by default.
func TestOfflineJudgeIsDocumented(t *testing.T) {
	for _, doc := range []string{"README.md", "docs/judge.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "go run ./cmd/gymlens-bench openai-server") {
			t.Errorf("%s does not say how to start the offline judge endpoint", doc)
		}
	}
	b, _ := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if !regexp.MustCompile(`judge [^\n]*@http://(localhost|127\.0\.0\.1):8000/v1`).Match(b) || !strings.Contains(usage, "--addr 127.0.0.1:8000") {
		t.Errorf("the README's judge line does not ask openai-server's default address, 127.0.0.1:8000")
	}
}
