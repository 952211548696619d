print("pinion")
