print("tvimport: under construction")
