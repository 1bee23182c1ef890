def test_in():
    pass
