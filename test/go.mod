// The proofs' shared, dependency-light packages: the conformance suite every Argo CD release runs
// (suite, corpus, probe, argocdoperator), the recorded timelines' loader and oracle (timeline), Kargo's
// rules (kargo, kargo/stage; Kargo v1.11.2), the pictures (picture, svg), the plugin's verdict held to
// the timelines (verdict), and the live suite's recorded Applications with what notifications must do on
// them (notifications). It requires nothing the product does not, so that every proof module can use it.
module github.com/analysis-health/analysis-health/test

go 1.26

require (
	github.com/analysis-health/analysis-health v0.0.0
	gopkg.in/evanphx/json-patch.v4 v4.12.0
	k8s.io/api v0.29.3
	k8s.io/apimachinery v0.29.3
	sigs.k8s.io/yaml v1.4.0
)

require (
	github.com/go-logr/logr v1.4.1 // indirect
	github.com/gobwas/glob v0.2.3 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/google/gofuzz v1.2.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/spf13/cobra v1.8.1 // indirect
	github.com/spf13/pflag v1.0.5 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	golang.org/x/net v0.34.0 // indirect
	golang.org/x/text v0.21.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	k8s.io/klog/v2 v2.110.1 // indirect
	k8s.io/utils v0.0.0-20230726121419-3b25d923346b // indirect
	layeh.com/gopher-json v0.0.0-20190114024228-97fed8db8427 // indirect
	sigs.k8s.io/json v0.0.0-20221116044647-bc3834ca7abd // indirect
	sigs.k8s.io/structured-merge-diff/v4 v4.4.1 // indirect
)

// The project's own modules, from this checkout.
replace github.com/analysis-health/analysis-health => ..
