def untyped(x):
    return x
