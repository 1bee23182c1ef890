def test_outside():
    pass
