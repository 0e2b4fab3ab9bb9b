"""Package data of app (see app/resources.py): a package, so the wheel ships the folder and
importlib.resources finds it, in an installed wheel and in an editable checkout alike."""
