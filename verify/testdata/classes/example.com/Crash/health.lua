return {status = obj.status.phase == "Ready" and "Healthy" or "Degraded"}
