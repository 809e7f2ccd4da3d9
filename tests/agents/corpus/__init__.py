"""Bad model outputs (generated and handwritten) and the round they are written against."""
