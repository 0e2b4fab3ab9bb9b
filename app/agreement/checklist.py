"""The reporting checklists a study report answers, item by item, with where it answers them.

GRRAS: Kottner J et al. (2011), Guidelines for Reporting Reliability and Agreement Studies,
J Clin Epidemiol 64:96. STARD 2015: Bossuyt PM et al. (2015), BMJ 351:h5527; here the judge is
the index test and the readers' consensus the reference standard. Items that only the
manuscript can answer (background, registration, funding) say so. A test renders a report and
checks that every section named here exists and is not empty.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    guideline: str
    number: str
    asks: str
    section: str | None  # the report's anchor that answers it; None: for the manuscript


ITEMS = (
    Item("GRRAS", "1", "Identify that interrater / intrarater agreement was investigated", "title"),
    Item("GRRAS", "2", "Name and describe the measurement device (the judge)", "index-test"),
    Item("GRRAS", "3", "Specify the subject population (the edits)", "cases"),
    Item("GRRAS", "4", "Specify the rater population", "readers"),
    Item("GRRAS", "5", "What is known, and the rationale", "objectives"),
    Item("GRRAS", "6", "How the sample size was chosen; raters, subjects, replicates", "planning"),
    Item("GRRAS", "7", "The sampling method", "design"),
    Item("GRRAS", "8", "The rating process: interval between repeats, information, blinding", "process"),
    Item("GRRAS", "9", "Whether ratings were independent", "process"),
    Item("GRRAS", "10", "The statistical analysis", "methods"),
    Item("GRRAS", "11", "Actual numbers of raters, subjects and replicate observations", "flow"),
    Item("GRRAS", "12", "Characteristics of raters (training, experience) and subjects", "readers"),
    Item("GRRAS", "13", "Estimates of reliability and agreement with their uncertainty", "estimates"),
    Item("GRRAS", "14", "Practical relevance of the results", "headline"),
    Item("GRRAS", "15", "Detailed results", "data"),
    Item("STARD", "1", "Identified as a study of accuracy (the judge against readers)", "title"),
    Item("STARD", "2", "Structured summary", "summary"),
    Item("STARD", "3", "Clinical background, intended use of the index test", None),
    Item("STARD", "4", "Study objectives and hypotheses", "objectives"),
    Item("STARD", "5", "Prospective or retrospective", "design"),
    Item("STARD", "6", "Eligibility criteria", "design"),
    Item("STARD", "7", "On what basis potentially eligible cases were identified", "design"),
    Item("STARD", "8", "Where and when (setting, dates)", "process"),
    Item("STARD", "9", "Consecutive, random or convenience sample", "design"),
    Item("STARD", "10a", "Index test in enough detail to replicate", "index-test"),
    Item("STARD", "10b", "Reference standard in enough detail to replicate", "reference"),
    Item("STARD", "11", "Rationale for choosing the reference standard", "reference"),
    Item("STARD", "12a", "Positivity cut-off of the index test", "index-test"),
    Item("STARD", "12b", "Positivity cut-off of the reference standard", "reference"),
    Item("STARD", "13a", "Whether the index test's readers knew the reference", "process"),
    Item("STARD", "13b", "Whether the reference readers knew the index test", "process"),
    Item("STARD", "14", "Methods for estimating or comparing accuracy", "methods"),
    Item("STARD", "15", "How indeterminate results were handled", "missing"),
    Item("STARD", "16", "How missing data were handled", "missing"),
    Item("STARD", "17", "Analyses of variability (pre-specified or exploratory)", "methods"),
    Item("STARD", "18", "Intended sample size and how it was determined", "planning"),
    Item("STARD", "19", "Flow of participants (diagram)", "flow"),
    Item("STARD", "20", "Baseline characteristics", "cases"),
    Item("STARD", "21a", "Distribution of the target condition", "cases"),
    Item("STARD", "21b", "Distribution of alternative diagnoses", "cases"),
    Item("STARD", "22", "Time interval between index test and reference standard", "process"),
    Item("STARD", "23", "Cross tabulation of index test by reference standard", "estimates"),
    Item("STARD", "24", "Estimates of accuracy and their precision", "estimates"),
    Item("STARD", "25", "Adverse events", None),
    Item("STARD", "26", "Limitations, including bias and uncertainty", "limitations"),
    Item("STARD", "27", "Implications for practice", "headline"),
    Item("STARD", "28", "Registration", None),
    Item("STARD", "29", "Where the full protocol can be accessed", "design"),
    Item("STARD", "30", "Sources of funding", None),
)
