package cli

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/analysis-health/analysis-health/generator"
)

func init() { verbs = append(verbs, newKubeconfigSecretCommand) }

// KubeconfigSecretOptions are kubeconfig-secret's inputs (the command's flags), for tests and the live
// suite, which write the Secret exactly as a user does.
type KubeconfigSecretOptions struct {
	// Name, Namespace and Key of the Secret: generate --format kargo's --kubeconfig-secret, --project and
	// --kubeconfig-key.
	Name, Namespace, Key string
	// Server is the workload API server's https:// address as the Rollouts controller of the control plane
	// reaches it; CA its certificate authority (PEM).
	Server string
	CA     []byte
	// Token is the workload ServiceAccount's token; Expires when it expires (zero: unknown).
	Token   string
	Expires time.Time
	// Renew is the command line that renews the Secret, written as a comment (no secret in it).
	Renew string
}

// KubeconfigSecretDefaultDuration is --duration's default: what rbac.yaml's kubectl create token line asks.
const KubeconfigSecretDefaultDuration = 168 * time.Hour

// AnnotationTokenExpires records when the Secret's token expires (RFC 3339), when it is known.
const AnnotationTokenExpires = "analysis-health.io/token-expires"

func newKubeconfigSecretCommand(o *Options) *cobra.Command {
	var (
		name, namespace, key, server, caFile, tokenFile, fromSA, kubeconfig, kubeContext, out string
		duration                                                                              time.Duration
	)
	cmd := &cobra.Command{
		Use:     "kubeconfig",
		Aliases: []string{"kubeconfig-secret"},
		Short:   "Write the Secret of a workload cluster's kubeconfig the plugin reads (multi-cluster)",
		Long: `kubeconfig (alias kubeconfig-secret) writes the Secret that generate --format kargo
--kubeconfig-secret names: a kubeconfig of one https:// workload API server, its
certificate-authority-data and a token of the ServiceAccount of the generated rbac.yaml, for the
Kargo Project namespace of the control plane. The kubeconfig is checked as the plugin checks it.

The token is read from --token-file, or minted (a TokenRequest: bound and expiring) for the
ServiceAccount --token-from-serviceaccount NAMESPACE/NAME with the workload cluster's kubeconfig
(--kubeconfig, --context), whose server and certificate authority are then the defaults of --server
and --ca-file. Run it again to renew the token before it expires (the Secret's annotation
` + AnnotationTokenExpires + ` says when). Apply the output on the control-plane cluster.`,
		Example: `  analysis-health kubeconfig --kubeconfig-secret shop-workload --project kargo-shop \
    --server https://workload.example:6443 --ca-file ca.crt --token-file token`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("kubeconfig takes no arguments, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return usageError("--kubeconfig-secret is required: the Secret's name, as generate --format kargo --kubeconfig-secret names it")
			}
			if !dnsSubdomain.MatchString(name) || len(name) > 253 {
				return usageError("--kubeconfig-secret %q is not a valid object name (lower-case letters, digits, '-' and '.')", name)
			}
			if namespace == "" {
				return usageError("--project is required: the Kargo Project namespace the verification's AnalysisRuns run in")
			}
			if !dnsLabel.MatchString(namespace) || len(namespace) > 63 {
				return usageError("--project %q is not a valid namespace (lower-case letters, digits and '-', at most 63)", namespace)
			}
			if !secretKey.MatchString(key) || len(key) > 253 || key == "." || key == ".." {
				return usageError("--kubeconfig-key %q is not a valid Secret key (letters, digits, '-', '_' and '.')", key)
			}
			if (tokenFile == "") == (fromSA == "") {
				return usageError("give one of --token-file and --token-from-serviceaccount")
			}
			if fromSA == "" && (cmd.Flags().Changed("duration") || kubeconfig != "" || kubeContext != "") {
				return usageError("--duration, --kubeconfig and --context go with --token-from-serviceaccount")
			}
			so := KubeconfigSecretOptions{Name: name, Namespace: namespace, Key: key, Server: server}
			if caFile != "" {
				ca, err := os.ReadFile(caFile)
				if err != nil {
					return usageError("--ca-file: %v", err)
				}
				so.CA = ca
			}
			if tokenFile != "" {
				raw, err := os.ReadFile(tokenFile)
				if err != nil {
					return usageError("--token-file: %v", err)
				}
				so.Token = strings.TrimSpace(string(raw))
				if so.Token == "" {
					return usageError("--token-file %s is empty", tokenFile)
				}
				so.Expires = tokenExpiry(so.Token)
			} else {
				ns, sa, ok := strings.Cut(fromSA, "/")
				if !ok || !dnsLabel.MatchString(ns) || !dnsSubdomain.MatchString(sa) {
					return usageError("--token-from-serviceaccount %q is not NAMESPACE/NAME", fromSA)
				}
				if duration < 10*time.Minute {
					return usageError("--duration %s is shorter than the API server's minimum of 10m", duration)
				}
				w, err := loadWorkloadCluster(kubeconfig, kubeContext)
				if err != nil {
					return fmt.Errorf("the workload cluster's kubeconfig (--kubeconfig, --context): %v", err)
				}
				if so.Server == "" {
					so.Server = w.Server
				}
				if so.CA == nil {
					so.CA = w.CA
				}
				ctx := cmd.Context()
				if ctx == nil {
					ctx = context.Background()
				}
				if so.Token, so.Expires, err = w.RequestToken(ctx, ns, sa, duration); err != nil {
					return err
				}
			}
			so.Renew = renewLine(cmd)
			manifest, err := KubeconfigSecret(so)
			if err != nil {
				return err
			}
			if out == "" {
				_, err = o.Out.Write(manifest)
				return err
			}
			// the file holds a token: readable by its owner alone, whatever it was before
			if err := os.WriteFile(out, manifest, 0o600); err != nil {
				return err
			}
			if err := os.Chmod(out, 0o600); err != nil {
				return err
			}
			fmt.Fprintf(o.ErrOut, "wrote %s (Secret %s/%s key %s)\n", out, namespace, name, key)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "kubeconfig-secret", "", "the Secret's name: generate --format kargo's --kubeconfig-secret (required)")
	f.StringVar(&namespace, "project", "", "the Kargo Project namespace on the control plane, where the Secret goes (required)")
	f.StringVar(&key, "kubeconfig-key", generator.DefaultKargoKubeconfigKey, "the Secret's key holding the kubeconfig: generate --format kargo's --kubeconfig-key")
	f.StringVar(&server, "server", "", "the workload API server's https:// address, as the control plane's Rollouts controller reaches it (default with --token-from-serviceaccount: the kubeconfig's)")
	f.StringVar(&caFile, "ca-file", "", "PEM file of the workload API server's certificate authority (default with --token-from-serviceaccount: the kubeconfig's)")
	f.StringVar(&tokenFile, "token-file", "", "file holding the ServiceAccount's token (kubectl create token's output)")
	f.StringVar(&fromSA, "token-from-serviceaccount", "", "NAMESPACE/NAME: mint the token with a TokenRequest for this ServiceAccount (rbac.yaml's analysis-health-rollout-reader)")
	f.DurationVar(&duration, "duration", KubeconfigSecretDefaultDuration, "with --token-from-serviceaccount: the token's lifetime asked for (the API server may shorten it)")
	f.StringVar(&kubeconfig, "kubeconfig", "", "with --token-from-serviceaccount: the workload cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config)")
	f.StringVar(&kubeContext, "context", "", "with --token-from-serviceaccount: the kubeconfig's context of the workload cluster (default: its current one)")
	f.StringVar(&out, "out", "", "write the manifest to this file (mode 0600) instead of stdout")
	return cmd
}

// renewLine is the command line that wrote the Secret, to renew it: the flags as given (no secret: the
// token comes from a file or a TokenRequest).
func renewLine(cmd *cobra.Command) string {
	parts := []string{"analysis-health kubeconfig"}
	for _, n := range []string{"kubeconfig-secret", "project", "kubeconfig-key", "server", "ca-file", "token-file", "token-from-serviceaccount", "duration", "kubeconfig", "context"} {
		if f := cmd.Flags().Lookup(n); f != nil && f.Changed {
			parts = append(parts, "--"+n+" "+f.Value.String())
		}
	}
	return strings.Join(parts, " ")
}

// tokenExpiry is a JWT's exp claim (not verified: only to say when to renew), or zero.
func tokenExpiry(token string) time.Time {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil || claims.Exp <= 0 {
		return time.Time{}
	}
	return time.Unix(claims.Exp, 0).UTC()
}

// KubeconfigSecret checks o and returns the Secret's manifest. The kubeconfig passes the plugin's own
// check (package remote's Config) or nothing is written; errors name the flag to fix.
func KubeconfigSecret(o KubeconfigSecretOptions) ([]byte, error) {
	u, err := url.Parse(o.Server)
	switch {
	case o.Server == "":
		return nil, usageError("--server is required: the workload API server's https:// address")
	case err != nil || u.Host == "":
		return nil, usageError("--server %q is not an https:// URL with a host", o.Server)
	case u.Scheme != "https":
		return nil, usageError("--server %q is %s://: the plugin sends the token to https:// servers only", o.Server, u.Scheme)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return nil, usageError("--server %q holds user info, a query or a fragment", o.Server)
	}
	if len(o.CA) == 0 {
		return nil, usageError("--ca-file is required: the workload API server's certificate authority (PEM)")
	}
	if !x509.NewCertPool().AppendCertsFromPEM(o.CA) {
		return nil, usageError("--ca-file holds no PEM certificate")
	}
	if o.Token == "" {
		return nil, usageError("the token is empty (--token-file, --token-from-serviceaccount)")
	}
	if strings.ContainsAny(o.Token, "\r\n \t") {
		return nil, usageError("the token holds white space: --token-file must hold one token")
	}
	if o.Key == "" {
		o.Key = generator.DefaultKargoKubeconfigKey
	}
	// exactly what the plugin accepts (package remote's Config; TestKubeconfigSecretPassesPluginCheck):
	// one https:// cluster with certificate-authority-data, one user with a token, one context
	raw, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "Config",
		"clusters": []any{map[string]any{"name": "workload", "cluster": map[string]any{
			"server": o.Server, "certificate-authority-data": base64.StdEncoding.EncodeToString(o.CA)}}},
		"users":           []any{map[string]any{"name": "analysis-health", "user": map[string]any{"token": o.Token}}},
		"contexts":        []any{map[string]any{"name": "workload", "context": map[string]any{"cluster": "workload", "user": "analysis-health"}}},
		"current-context": "workload",
	})
	if err != nil {
		return nil, err
	}
	annotations := map[string]any{"analysis-health.io/server": o.Server}
	if !o.Expires.IsZero() {
		annotations[AnnotationTokenExpires] = o.Expires.UTC().Format(time.RFC3339)
	}
	secret := map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       "Opaque",
		"metadata": map[string]any{
			"name":      o.Name,
			"namespace": o.Namespace,
			"labels": map[string]any{
				"app.kubernetes.io/name":      "analysis-health",
				"app.kubernetes.io/component": "rollout-analysis",
			},
			"annotations": annotations,
		},
		"data": map[string]any{o.Key: base64.StdEncoding.EncodeToString(raw)},
	}
	body, err := yaml.Marshal(secret)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Generated by analysis-health %s: Secret %s/%s, the kubeconfig with which the\n", Version, o.Namespace, o.Name)
	fmt.Fprintf(&b, "# analysis-health/rollout-analysis plugin reads the workload cluster %s\n# (generate --format kargo --project %s --kubeconfig-secret %s).\n", o.Server, o.Namespace, o.Name)
	fmt.Fprintf(&b, "# Apply it on the Kargo control-plane cluster. It holds a token: keep it out of git.\n")
	if !o.Expires.IsZero() {
		fmt.Fprintf(&b, "# The token expires at %s; renew it before then", o.Expires.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintf(&b, "# Renew it before the token expires")
	}
	if o.Renew != "" {
		fmt.Fprintf(&b, ":\n#   %s\n", o.Renew)
	} else {
		b.WriteString(".\n")
	}
	b.Write(body)
	return b.Bytes(), nil
}

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	secretKey    = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
)
