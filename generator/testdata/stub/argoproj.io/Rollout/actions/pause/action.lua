obj.spec.paused = true
return obj
