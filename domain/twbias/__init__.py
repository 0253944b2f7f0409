"""twbias."""
