package inspect

import "testing"

func TestParseTemplateSelector(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want TemplateSelector
		ok   bool
	}{
		{"x", TemplateSelector{Name: "x"}, true},
		{"shop/x", TemplateSelector{Namespace: "shop", Name: "x"}, true},
		{"AnalysisTemplate/x", TemplateSelector{Kind: KindTemplate, Name: "x"}, true},
		{"AnalysisTemplate/shop/x", TemplateSelector{Kind: KindTemplate, Namespace: "shop", Name: "x"}, true},
		{"ClusterAnalysisTemplate/x.y", TemplateSelector{Kind: KindClusterTmpl, Name: "x.y"}, true},
		{"ClusterAnalysisTemplate/shop/x", TemplateSelector{}, false},
		{"bogus/x/y", TemplateSelector{}, false},
		{"Bogus/x", TemplateSelector{}, false},
		{"", TemplateSelector{}, false},
		{"shop/", TemplateSelector{}, false},
		{"a/b/c/d", TemplateSelector{}, false},
	} {
		got, err := ParseTemplateSelector(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%q: %+v %v", tc.in, got, err)
		}
		if tc.ok && got.String() != tc.in {
			t.Errorf("%q prints as %q", tc.in, got.String())
		}
	}
}
