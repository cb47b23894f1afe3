-- analysis-health: argoproj.io/Experiment action discovery. Argo CD ships no Experiment actions; this offers
-- terminate on the rule Argo CD's built-in uses for AnalysisRuns: until the experiment is terminated or has
-- completed (an Experiment's phase has the same values). Runs without open libraries, as Argo CD runs
-- every discovery. See docs/actions.md.
local spec = obj.spec
if type(spec) ~= "table" then
  spec = {}
end
local status = obj.status
if type(status) ~= "table" then
  status = {}
end
local phase = status.phase
local completed = phase == "Successful" or phase == "Failed" or phase == "Error" or phase == "Inconclusive"

local actions = {}
actions["terminate"] = { ["disabled"] = spec.terminate == true or completed }
return actions
