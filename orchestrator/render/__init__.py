"""Renderers: a Matrix (or report) in, a string out. Files are written by the CLI."""
