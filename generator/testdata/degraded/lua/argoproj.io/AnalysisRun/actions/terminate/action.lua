-- analysis-health: terminate an AnalysisRun, as Argo CD's built-in action does (spec.terminate = true; the
-- Rollouts controller stops measuring and completes the run). See docs/actions.md.
if type(obj.spec) ~= "table" then
  error("terminate: the AnalysisRun has no spec", 0)
end
obj.spec.terminate = true
return obj
