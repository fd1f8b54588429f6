def set_matplotlib_formats(*formats, **kwargs):
    pass
