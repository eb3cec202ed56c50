"""The admin of what a study is made of: its items (with their videos), the sessions
they are split into, and the tutorial's pairs."""

from django.contrib import admin
from django.db.models import Count

from annotation.models import Item, ItemMember, Session, SessionItem, TutorialPair


@admin.register(TutorialPair)
class TutorialPairAdmin(admin.ModelAdmin):
    list_display = ("label", "study", "dimension", "order")
    list_filter = ("study", "dimension__key")
    raw_id_fields = ("generated", "real")
    list_select_related = ("study", "dimension__study")


class SessionItemInline(admin.TabularInline):
    model = SessionItem
    extra = 0
    raw_id_fields = ("item",)


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "study", "index", "item_count")
    list_filter = ("study",)
    list_select_related = ("study",)
    inlines = [SessionItemInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_items=Count("items"))

    @admin.display(ordering="_items", description="items")
    def item_count(self, obj):
        return obj._items


class ItemMemberInline(admin.TabularInline):
    model = ItemMember
    extra = 0
    raw_id_fields = ("stimulus",)


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("public_id", "study", "role", "dimension", "content", "created_at")
    list_filter = ("study", "role")
    search_fields = ("public_id", "content")
    inlines = [ItemMemberInline]
    list_select_related = ("study", "dimension__study")
