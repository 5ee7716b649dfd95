"""What the report page and every method's report section share: HTML and Markdown building blocks, charts and the
facts each verdict states. Below the method packages, so a method's section (``<family>/report_section.py``) builds
on it without importing the report."""
