-- Stub Experiment health for the format goldens: a kind without actions.
-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options
if type(obj.status) == "table" and obj.status.phase == "Inconclusive" then
  return {status = inconclusiveStatus, message = "stub Experiment: inconclusive"}
end
return {status = "Healthy", message = "stub Experiment"}
