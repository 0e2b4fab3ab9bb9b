"""Words that change with a count, for every page and report alike."""


def plural(word: str, n: object) -> str:
    """"case" | plural(1) is "case", | plural(3) is "cases": never "1 cases read"."""
    return word if n == 1 else word + "s"


# The data's own names keep their abbreviations in lower case ("signs of amd", "chest_xray");
# a radiologist reads them as written here.
_WORDS = {"xray": "X-ray", "x-ray": "X-ray", "mri": "MRI", "ct": "CT", "amd": "AMD",
          "dr": "DR"}


def spaced(value: str) -> str:
    """A vocabulary value as words: "chest_xray" reads "chest X-ray", "signs of amd" reads
    "signs of AMD"."""
    return " ".join(_WORDS.get(word.lower(), word) for word in value.replace("_", " ").split(" "))
