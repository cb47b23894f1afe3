if type(obj.status) == "table" and obj.status.phase == "Ready" then return {status = "Healthy"} end
return {status = "degraded"}
