return {terminate = {disabled = false}}
