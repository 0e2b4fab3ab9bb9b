"""MedBanana Review: review, reader-study and regeneration app for Med-Banana-50K."""
