return {status = "Healthy"}
