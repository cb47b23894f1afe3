if obj.status ~= nil and obj.status.phase == "Successful" then
  return {status = "Healthy", message = "ok"}
end
return {status = "Progressing", message = "waiting"}
