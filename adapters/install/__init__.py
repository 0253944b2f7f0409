"""What is installed: optional libraries (extras) located without import, and model files taken from downloaded wheels."""
