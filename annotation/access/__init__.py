"""Who may see and change what: the one access rule (``rules``) every view, page and export goes
through, with each concept's rules registered there, and the revocation of API tokens when a
password changes.
"""
