"""Images: files by id inside the roots, the store of regenerated images, difference
maps, and preservation and region metrics."""
