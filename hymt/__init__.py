"""hymt: translation server, CLI and SDK for the Hunyuan translation models."""
