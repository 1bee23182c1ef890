"""The static site of the results store (``valorch site build``): its pages, plots and
templates. Extra: ``valorch[site]``."""
