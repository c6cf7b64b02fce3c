package main

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"
)

// chromium finds a Chromium or Chrome on this machine ("" when none).
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// checkInBrowser opens page (a file) in headless Chromium and checks that
// every figure decoded, every table has rows, the counts are as expected,
// and the console had no error and no exception. Without Chromium it says
// so and skips.
// openBrowser starts headless Chromium (skipping the test, with why, when
// there is none) and listens to its console from before the first page:
// consoleProblems stops listening and returns every error, warning and
// exception it heard. The browser closes when the test ends.
func openBrowser(t *testing.T, why string, flags ...chromedp.ExecAllocatorOption) (ctx context.Context, consoleProblems func() []string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s starts headless Chromium", why)
	}
	exe := chromium()
	if exe == "" {
		t.Skipf("no Chromium on this machine (apt-get install chromium): %s is skipped", why)
	}
	opts := append(append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox), flags...)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	lctx, stop := context.WithCancel(ctx)
	var mu sync.Mutex
	var problems []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range chromedp.Console(lctx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("console %s (%s:%d)", m, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string {
		time.Sleep(200 * time.Millisecond) // let late messages arrive
		stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return problems
	}
}

func checkInBrowser(t *testing.T, page string, tables, figures int) {
	t.Helper()
	ctx, consoleProblems := openBrowser(t, "the browser check", chromedp.Flag("allow-file-access-from-files", true))
	type counts struct {
		Tables, Rows, Images, Decoded, Figures int
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitReady("body"),
	)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`Array.from(document.images).every(i => i.complete)`)); err != nil {
		t.Fatalf("chromium: waiting for the images: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[counts](`({
			Tables: document.querySelectorAll("table.gl-table").length,
			Rows: Array.from(document.querySelectorAll("table.gl-table")).filter(t => t.tBodies[0].rows.length > 0).length,
			Images: document.images.length,
			Decoded: Array.from(document.images).filter(i => i.naturalWidth > 0 && i.getBoundingClientRect().width > 0).length,
			Figures: document.querySelectorAll("figure").length,
		})`))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	// Tables sort by a column: TC of the main table ascending on the
	// first click, descending on the second, every row kept.
	sorted, err := chromedp.Run(ctx, chromedp.Evaluate[[]bool](`(() => {
			const t = document.querySelector("#table-main"), th = t.tHead.rows[0].cells[3], n = t.tBodies[0].rows.length;
			const col = () => Array.from(t.tBodies[0].rows).map(r => parseFloat(r.cells[3].textContent));
			th.click(); const up = col(); th.click(); const down = col();
			return [up.every((x, i) => i == 0 || up[i-1] <= x), down.every((x, i) => i == 0 || down[i-1] >= x),
				t.tBodies[0].rows.length == n, t.tBodies[0].rows[0].cells[0].textContent != "", th.getAttribute("aria-sort") == "descending"];
		})()`))
	if err != nil {
		t.Fatalf("chromium: sorting: %v", err)
	}
	for i, ok := range sorted {
		if !ok {
			t.Errorf("sorting the main table by TC: check %d of %v failed", i, sorted)
		}
	}
	problems := consoleProblems()
	if got.Tables != tables || got.Rows != tables {
		t.Errorf("%d tables rendered (%d with rows), want %d", got.Tables, got.Rows, tables)
	}
	if got.Figures != figures || got.Images != figures || got.Decoded != figures {
		t.Errorf("%d figures, %d images, %d decoded and shown; want %d", got.Figures, got.Images, got.Decoded, figures)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
