package kargoui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium with one tab, its profile in a fresh folder.
type Browser struct {
	// Log is Chromium's own output.
	Log string

	ctx    context.Context
	cancel func()
	dir    string
	logf   *os.File
}

// Viewport is the size of the page the screenshots show, in CSS pixels: the Stage's drawer takes 80 %
// of its width.
var Viewport = struct{ Width, Height int64 }{1440, 900}

// stepTimeout bounds each wait for the page: Kargo's UI loads its whole bundle (a few MB) on the first
// page, then answers from the API server on 127.0.0.1.
const stepTimeout = 90 * time.Second

// NewBrowser starts Chromium (the machine's Debian package) headless, as root without its sandbox, and
// with nothing of it reaching outside hosts on its own (background networking, component updates, sync
// and QUIC off: the machine's network is closed, and their refused connections only slow it down).
func NewBrowser(chromium string) (*Browser, error) {
	dir, err := os.MkdirTemp("", "kargoui-chromium-")
	if err != nil {
		return nil, err
	}
	b := &Browser{dir: dir, Log: filepath.Join(dir, "chromium.log")}
	if b.logf, err = os.Create(b.Log); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(int(Viewport.Width), int(Viewport.Height)),
		chromedp.CombinedOutput(b.logf),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	b.ctx = ctx
	b.cancel = func() { cancelCtx(); cancelAlloc() }
	// Start it now, so that a browser that cannot start fails here, not in the first page.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(Viewport.Width, Viewport.Height)); err != nil {
		b.Close()
		return nil, fmt.Errorf("start %s: %w (its output: %s)", chromium, err, tail(b.Log))
	}
	return b, nil
}

// Close stops the browser and removes its profile.
func (b *Browser) Close() {
	if b.cancel != nil {
		b.cancel()
	}
	if b.logf != nil {
		_ = b.logf.Close()
	}
	_ = os.RemoveAll(b.dir)
}

// step runs one wait of the page with its own deadline; on failure the error names what was awaited and
// quotes the page's visible text, which tells a login page from an error page from a Stage without
// verifications.
func (b *Browser) step(what string, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := f(ctx); err != nil {
		return fmt.Errorf("%s: %w; the page (%s) shows: %q", what, err, b.location(), b.pageText())
	}
	return nil
}

func (b *Browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		return "location unknown: " + err.Error()
	}
	return loc
}

func (b *Browser) pageText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
	if err != nil {
		return "(no text: " + err.Error() + ")"
	}
	if len(text) > 2000 {
		text = text[:2000] + "…"
	}
	return text
}

// poll waits until the JavaScript expression is truthy and returns its value.
func poll[T any](ctx context.Context, expr string) (T, error) {
	return chromedp.Run(ctx, chromedp.Poll[T](expr, chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(stepTimeout)))
}

// settle waits until the page's finite animations have ended (antd fades a tooltip or a modal in and
// out, and zooms a modal), so that a screenshot shows what stays on the screen; a spinner's endless
// animation does not count.
func settle(ctx context.Context) error {
	_, err := poll[bool](ctx, `document.getAnimations().every(a => a.playState !== 'running' ||
		(a.effect && a.effect.getTiming().iterations === Infinity))`)
	return err
}

// Login logs in as admin through Kargo's login page (pages/login/login.tsx, features/auth/admin-login.tsx):
// the password typed into its field and the form submitted, as a user does.
func (b *Browser) Login(s *Server) error {
	if err := b.step("open the login page", func(ctx context.Context) error {
		return chromedp.Do(ctx, chromedp.Navigate(s.URL+"/login"),
			chromedp.WaitVisible(chromedp.CSS(`input[type=password]`)))
	}); err != nil {
		return err
	}
	return b.step("log in as admin", func(ctx context.Context) error {
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`input[type=password]`), s.Password),
			chromedp.Click(chromedp.CSS(`form button[type=submit]`))); err != nil {
			return err
		}
		// the login page navigates away once the API server has issued the token
		if _, err := poll[bool](ctx, `location.pathname !== '/login'`); err != nil {
			return err
		}
		// leave the page the login lands on: its watch streams would hold connections (Verification)
		return chromedp.Do(ctx, chromedp.Navigate("about:blank"))
	})
}

// js quotes s as a JavaScript string.
func js(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// The Stage drawer's active tab pane, and the first row of its table: the newest verification
// (stage-details.tsx sorts them by start time, newest first).
const (
	activePane = `document.querySelector('.ant-drawer .ant-tabs-tabpane-active')`
	firstRow   = `(` + activePane + ` || document).querySelector('tr.ant-table-row')`
)

// Verification opens the Stage's page and reads its newest verification: the Verifications tab's row,
// the phase icon's tooltip (hovered with the mouse), and the AnalysisRun's modal (opened by its link):
// its Summary tab and the tab of each metric. It reads what the page shows and stops there: a Stage with
// no verification (the tab's table is empty: Row is "", TabShot the empty tab) or a verification with
// no AnalysisRun (a Stage without spec.verification, which Kargo marks Successful on its health alone:
// AnalysisRun is "", no modal, no RunShot).
func (b *Browser) Verification(s *Server, project, stage string) (*Verification, error) {
	// each Stage in a tab of its own, closed after it (the login is kept in the profile's storage):
	// Kargo's UI keeps watch streams open, and with the browser's six connections per host, a Stage
	// opened in the tab of the previous one waited for one of them (seen: 113 s on the second and third)
	parent := b.ctx
	tabCtx, closeTab := chromedp.NewContext(parent)
	b.ctx = tabCtx
	defer func() { closeTab(); b.ctx = parent }()
	// the tab's first action on its own context, not on a step's: chromedp closes a tab when the context
	// of the action that opened it ends
	if err := chromedp.Do(tabCtx, chromedp.EmulateViewport(Viewport.Width, Viewport.Height)); err != nil {
		return nil, fmt.Errorf("open a tab: %w", err)
	}
	v := &Verification{Metrics: map[string]string{}, Tables: map[string][][]string{}}
	page := s.URL + "/project/" + url.PathEscape(project) + "/stage/" + url.PathEscape(stage)
	tab := `//div[contains(@class,"ant-drawer")]//div[@role="tab"][normalize-space(.)="Verifications"]`
	if err := b.step("open the Stage's Verifications tab", func(ctx context.Context) error {
		// the drawer slides in: a click during its animation can miss the tab
		if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(tab)); err != nil {
			return err
		}
		if err := settle(ctx); err != nil {
			return err
		}
		if err := chromedp.Do(ctx, chromedp.Click(tab)); err != nil {
			return err
		}
		// a row, or antd's empty table ("No data"): the table is drawn from the Stage the drawer already
		// holds, so an empty one is not a table still loading
		shown, err := poll[string](ctx, `(() => { const p = `+activePane+`; if (!p) return '';
			const r = p.querySelector('tr.ant-table-row'); if (r) return 'row:' + r.innerText.trim();
			return p.querySelector('.ant-table-placeholder') ? 'empty:' : ''; })()`)
		v.Row = strings.TrimPrefix(shown, "row:")
		if shown == "empty:" {
			v.Row = ""
		}
		return err
	}); err != nil {
		return nil, err
	}
	if v.Row == "" {
		return v, b.step("capture the empty Verifications tab", func(ctx context.Context) error {
			if err := settle(ctx); err != nil {
				return err
			}
			var err error
			v.TabShot, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
			return err
		})
	}
	if err := b.step("read the verification's AnalysisRun", func(ctx context.Context) error {
		var err error
		v.AnalysisRun, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const a = `+firstRow+`.querySelector('a'); return a ? a.innerText.trim() : ''; })()`))
		if err != nil {
			return err
		}
		// the columns' titles and the row's cells (verifications.tsx: icon, Date, Duration, AnalysisRun, Freight)
		v.Columns, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...(`+activePane+`).querySelectorAll('thead th')].map(th => th.innerText.trim())`))
		if err != nil {
			return err
		}
		v.Cells, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...`+firstRow+`.querySelectorAll('td')].map(td => td.innerText.trim())`))
		return err
	}); err != nil {
		return nil, err
	}
	if err := b.step("hover the verification's phase icon", func(ctx context.Context) error {
		// the icon is the first cell's svg; a real mouse move over it opens antd's tooltip
		at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const i = `+firstRow+`.querySelector('td svg'); if (!i) return null;
			const r = i.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`))
		if err != nil {
			return err
		}
		if len(at) != 2 {
			return fmt.Errorf("no phase icon in the row %q", v.Row)
		}
		if err := chromedp.Do(ctx, chromedp.MouseEvent(chromedp.MouseMoved, at[0], at[1])); err != nil {
			return err
		}
		v.Tooltip, err = poll[string](ctx, `[...document.querySelectorAll('.ant-tooltip:not(.ant-tooltip-hidden) .ant-tooltip-inner')]
			.map(e => e.innerText.trim()).filter(t => t).join('\n')`)
		if err != nil {
			return err
		}
		v.Phase, v.Message, _ = strings.Cut(v.Tooltip, "\n")
		v.Message = strings.TrimSpace(v.Message)
		if err := settle(ctx); err != nil {
			return err
		}
		v.TabShot, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
		return err
	}); err != nil {
		return nil, err
	}
	if v.AnalysisRun == "" {
		return v, nil
	}
	if err := b.step("open the AnalysisRun "+v.AnalysisRun, func(ctx context.Context) error {
		// move away first: the tooltip would cover the link
		if err := chromedp.Do(ctx, chromedp.MouseEvent(chromedp.MouseMoved, 1, 1),
			chromedp.Click(chromedp.CSS(`.ant-drawer .ant-tabs-tabpane-active tr.ant-table-row a`))); err != nil {
			return err
		}
		// the Summary tab says "Analysis status unknown" until the run has been read
		var err error
		v.Summary, err = poll[string](ctx, `(() => { const m = document.querySelector('.ant-modal-wrap:not([style*="display: none"]) .ant-modal-body');
			if (!m) return ''; const p = m.querySelector('.ant-tabs-tabpane-active .ant-tabs-tabpane-active');
			const t = p ? p.innerText.trim() : ''; return t && !t.includes('Analysis status unknown') ? t : ''; })()`)
		if err != nil {
			return err
		}
		// the tooltip, gone with the mouse, fades out while the modal zooms in
		if _, err := poll[bool](ctx, `!document.querySelector('.ant-tooltip:not(.ant-tooltip-hidden)')`); err != nil {
			return err
		}
		if err := settle(ctx); err != nil {
			return err
		}
		v.RunShot, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
		return err
	}); err != nil {
		return nil, err
	}
	// the metrics: the modal's left-hand tabs after Summary
	var labels []string
	if err := b.step("list the AnalysisRun's metrics", func(ctx context.Context) error {
		var err error
		labels, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.ant-modal-body .ant-tabs-left .ant-tabs-tab')].map(t => t.innerText.trim())`))
		return err
	}); err != nil {
		return nil, err
	}
	for i, label := range labels {
		if i == 0 {
			continue // Summary
		}
		if err := b.step("open the metric tab "+label, func(ctx context.Context) error {
			sel := fmt.Sprintf(`(//div[contains(@class,"ant-modal-body")]//div[contains(@class,"ant-tabs-left")]//div[@role="tab"])[%d]`, i+1)
			if err := chromedp.Do(ctx, chromedp.Click(sel)); err != nil {
				return err
			}
			text, err := poll[string](ctx, `(() => { const p = document.querySelector('.ant-modal-body .ant-tabs-left .ant-tabs-tabpane-active');
				const t = p ? p.innerText.trim() : ''; return t.startsWith(`+js(firstLine(label))+`) ? t : ''; })()`)
			v.Metrics[label] = text
			if err != nil {
				return err
			}
			// the table of measurements: antd draws its header and body as two tables when it scrolls
			// (scroll.y), and a hidden measuring row in the body
			table, err := chromedp.Run(ctx, chromedp.Evaluate[[][]string](`(() => { const p = document.querySelector('.ant-modal-body .ant-tabs-left .ant-tabs-tabpane-active');
				const t = p && p.querySelector('.ant-table'); if (!t) return [];
				const head = [...t.querySelectorAll('thead th')].map(th => th.innerText.trim());
				const rows = [...t.querySelectorAll('tbody tr.ant-table-row')].map(tr => [...tr.querySelectorAll('td')].map(td => td.innerText.trim()));
				return [head, ...rows]; })()`))
			if len(table) > 0 {
				v.Tables[label] = table
			}
			return err
		}); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
