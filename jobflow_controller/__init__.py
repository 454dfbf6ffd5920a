"""jobflow-controller: Volcano's JobFlow and JobTemplate controllers, in Python, client-go style."""

__version__ = "0.1.0"
