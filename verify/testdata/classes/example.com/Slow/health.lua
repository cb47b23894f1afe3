if type(obj.status) == "table" and obj.status.phase == "Ready" then return {status = "Healthy"} end
if type(obj.spec) == "table" and type(obj.spec.mode) == "number" then
  while true do end
end
return {status = "Degraded"}
