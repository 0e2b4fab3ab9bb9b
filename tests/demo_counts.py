"""What the demo holds (app/demo/catalog.py), written out so that tests can fail.

152 tasks: chest X-ray 16 normals x 4 diseases added and 16 images x 4 diseases removed,
brain MRI and fundus 6 + 6 each. Outcomes cycle through catalog.SCENARIOS.
"""

TASKS = 152
OUTCOMES = {"success": 125, "failed": 14, "api_failed": 13}
MODALITIES = {"brain_mri": 12, "chest_xray": 128, "fundus": 12}
ATTEMPTS = 349
VERDICTS = 335  # each failed run has one round whose edit returned no image
JSON_FILES = 12
# The paper's pilot needs 50 accepted chest X-ray edits of each direction.
CHEST_SUCCESS = {"add": 53, "remove": 52}
DIRECTIONS = {"add": 76, "remove": 76}
# 32 pneumothorax tasks, 3 of them api_failed before any instruction was written.
PNEUMOTHORAX_SEARCHABLE = 29
# Every s3 task's first judge answer is not valid JSON.
UNREADABLE_VERDICTS = 14
