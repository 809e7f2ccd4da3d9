"""An example bring-your-own-bot package, used by the plug-in tests and shown in the README."""
