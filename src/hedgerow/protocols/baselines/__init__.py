"""Baseline overlays the papers compare against."""
