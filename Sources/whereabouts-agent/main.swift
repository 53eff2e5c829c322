print("not yet built")
