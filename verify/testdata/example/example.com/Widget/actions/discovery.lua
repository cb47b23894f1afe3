local actions = {}
actions["restart"] = {disabled = type(obj.spec) ~= "table"}
return actions
