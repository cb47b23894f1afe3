-- Stub AnalysisRun health for the format goldens: no suite, and actions without options.
-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options
if type(obj.status) == "table" and obj.status.phase == "Inconclusive" then
  return {status = inconclusiveStatus, message = "stub AnalysisRun: inconclusive"}
end
return {status = "Healthy", message = "stub AnalysisRun"}
