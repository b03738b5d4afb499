"""Who may see and change what: the roles, the one access rule (``rules``) every view, page and
export goes through, and the revocation of API tokens when a password changes.
"""
