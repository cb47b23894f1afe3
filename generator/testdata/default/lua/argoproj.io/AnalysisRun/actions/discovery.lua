-- analysis-health: argoproj.io/AnalysisRun action discovery, the same rule as Argo CD's built-in (v2.14 and
-- v3.2 alike): terminate is offered until the run is terminated or has completed. Argo CD's script fails on
-- a run without a status; this one offers terminate there, as for a run that is still pending.
-- Runs without open libraries, as Argo CD runs every discovery. See docs/actions.md.
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
