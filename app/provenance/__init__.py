"""What every edited image that leaves the app says of itself: a signed C2PA manifest and
the IPTC digital source type in its XMP (marks.py), signed by the operator's certificate or
by one this server made for itself (signing.py); and the facts they state (facts.py)."""
