package reliabilitydoc

// notes are what the figures above do not say by themselves: the behaviour the Rollouts controller
// decides, with the upstream code that decides it (paths relative to github.com/argoproj/argo-rollouts@
// v1.8.5), and what the runs changed in the plugin and the generator.
// fleetMarker is where the findings of the loads (fleet.go, from the reports) go.
const fleetMarker = "<!-- fleet -->\n"

const notes = `## What the runs showed

* **Watches took the plugin off the API server.** Each measurement used to make three requests of its
  own (get the Rollout, list the revision's runs and experiments: 3.0 a measurement at 2,000 Rollouts,
  21.4 measurements a second where 200 were due, in an earlier run). The plugin now keeps informers of each
  namespace a verification names and answers Running from them (docs/kargo.md, "Reads served from
  watches"); the API requests a measurement are in the tables above. A terminal verdict is still confirmed
  by a direct read; the fault cases WatchRefused and APIServerRestarted show a refused or broken watch read
  directly, with the reason logged.
` + fleetMarker + `* **The plugin's own rate limit was the load limit.** Its clients had client-go's defaults, 5 requests a
  second in bursts of 10 (k8s.io/client-go rest.DefaultQPS, DefaultBurst). 200 verifications in flight ask
  for about 60 reads a second at the default pollInterval; client-go's rate limiter then refused requests
  it could not send before apiTimeout ("client rate limiter Wait returned an error: rate: Wait(n=1) would
  exceed context deadline"), and the measurements of a 200-Rollout run were Error. The plugin's
  clients now allow 100 requests a second in bursts of 200 (rolloutplugin ClientQPS, ClientBurst; the API
  server's priority and fairness still protects it), and the rate limiter's refusal is reported as the
  timeout it is ("did not answer within 10s"). With the watches that limit binds only where the plugin
  still reads directly: each verification's first measurement (three requests, to pin the revision) and
  the confirmation of a verdict that ends one. Thousands of verifications started at once are measured
  once at about 100 ÷ 3 a second: the loads' setup column, and why each window starts an interval later.
* **Before the watches, at 2,000 Rollouts the controller's workers were the bound.** A worker waits for
  the whole measurement (the plugin's RPC is synchronous, analysis/analysis.go runMeasurements), so 30
  workers divided by the latency of three requests (0.9 s) was the rate.
* **The generated Role grants what the plugin uses, each grant proved needed.** An earlier Role granted
  get, list and watch on rollouts, analysisruns and experiments, of which the plugin used only get on
  rollouts, get and list on analysisruns and list on experiments; it was cut to those. The informers list
  and watch the three resources, so ` + "`rbac.yaml`" + ` now grants get, list and watch on rollouts and
  analysisruns, list and watch on experiments (never get on experiments). Each is removed in turn: without a
  grant of the direct reads the measurement is Error naming the verb; without one only the informers use
  it is exactly what the whole Role gives, read directly, and the plugin logs the refused request (a watch's
  403 comes back from the dynamic client as "unknown", so the plugin names the verb and the resource
  itself). TestReliability fails on a grant the plugin does not need as well as on one it lacks.
* **A plugin killed between two measurements is invisible to the verification.** The controller asks
  ` + "`Exited()`" + ` before every call and starts the plugin again (metricproviders/plugin/client/client.go
  startPluginSystem), then resumes the measurement in flight with its metadata: no Error, the same start
  and pin. A plugin killed *during* a call makes that measurement Error with an empty one in its place
  (metricproviders/plugin/rpc/rpc.go Resume: ` + "`MarkMeasurementError(resp, …)`" + ` on the zero response), so its
  pin is gone from the run; the next measurement chooses the revision again, by the Freight's image that the
  generated Stage snippet passes. That case is read from the code, not forced by the test (a kill cannot be
  timed into a call of a few milliseconds).
* **While the API server is down, nothing is written, not even the Errors.** The controller's log shows
  the plugin's measurements Error ("cannot reach", connection refused), but the controller cannot store
  them either (analysis/sync.go persistAnalysisRunStatus fails) and requeues the run with its rate
  limiter's exponential backoff (utils/queue DefaultArgoRolloutsRateLimiter), so the stored verification
  goes from Running to Running: the first measurement after the restart is a Resume of the one before the
  outage, with its pin, and it comes as late as the backoff grew. The Successful verdict came only after the
  frame that passes the analysis was stored.
* **A new measurement after an Error kept no pin.** After an Error the controller starts the next
  measurement with Run, not Resume, and hands no metadata; the plugin chose the revision again from the
  Rollout as it was then. It now takes the pin of the run's latest measurement that holds one
  (rolloutplugin earlierPin; TestPinnedRevision).
* **FuzzParseConfig found an error that named no field.** ` + "`{\"kubeconfigSecret\":{\"\":\"\"}}`" + ` was refused with
  encoding/json's ` + "`unknown field \"\"`" + `, which does not say it is inside kubeconfigSecret; the field now
  decodes strictly itself and prefixes its errors (rolloutplugin SecretKey.UnmarshalJSON). The inputs the
  fuzzer found are seeds of the target (internal/plugin/rolloutplugin/testdata/fuzz). encoding/json matches field names
  without regard to case, so ` + "`kubeConfigSecret`" + ` is read as kubeconfigSecret, not refused.
* **A deleted Rollout is Error, not Failed.** The measurement says which Rollout is not found; the
  controller retries an Error (DefaultErrorRetryInterval, 10 s) until consecutiveErrorLimit (4) is passed,
  then ends the run Error, about 50 s after the deletion.
`
