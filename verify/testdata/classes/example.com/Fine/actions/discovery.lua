return {touch = {disabled = obj.spec.mode == "off"}, spin = {}}
