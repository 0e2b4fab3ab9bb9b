"""Multi-reader multi-case (MRMC) analysis: readers and cases both random, so a conclusion holds
for readers in general, held to the field's reference software (OR-DBM MRMC, RJafroc)."""
